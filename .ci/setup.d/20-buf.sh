# buf, for the protocol lint test (tests/protocol/test_lint.py), pinned, from the npm
# registry (@bufbuild/buf ships the binary in its package), installed into .cache/buf
# before the tests run rather than during them. Idempotent: an installed copy of this
# version is kept. The test finds it there (or through CIRULLA_BUF).
BUF_VERSION=1.75.0
buf_bin=.cache/buf/node_modules/.bin/buf
if [ ! -x "$buf_bin" ] || [ "$("$buf_bin" --version 2>/dev/null)" != "$BUF_VERSION" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q npm
  fi
  mkdir -p .cache/buf
  npm install --no-save --no-audit --no-fund --prefix .cache/buf "@bufbuild/buf@$BUF_VERSION" >/dev/null
fi
CIRULLA_BUF="$PWD/$buf_bin"
export CIRULLA_BUF
echo "ci: buf $("$CIRULLA_BUF" --version) at $CIRULLA_BUF"
