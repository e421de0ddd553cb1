# bubblewrap, the sandbox of `cirulla tournament --sandbox` and of the ladder's managed
# bots (cirulla.clients.matches.sandbox); tests/confinement/test_bubblewrap.py runs real sandboxes and fails
# without it.
if ! command -v bwrap >/dev/null 2>&1; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q bubblewrap
fi
