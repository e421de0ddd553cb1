# Example engines (tests/bots/test_text.py): gcc builds the C engine, node runs the
# JavaScript one. Idempotent: installs only what is missing.
missing=()
command -v gcc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
command -v node >/dev/null 2>&1 || missing+=(nodejs)
if [ ${#missing[@]} -gt 0 ]; then
  apt-get update -qq && apt-get install -y -qq "${missing[@]}"
fi
