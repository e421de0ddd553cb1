from cirulla.cli import main

raise SystemExit(main())
