# A real headless browser for the web view's tests (tests/web/test_match_pages.py): Debian's
# chromium, driven by Playwright (a dev dependency from PyPI) through executable_path,
# so no browser build is downloaded. Sourced by .ci/run; installs only when missing.
if ! command -v chromium >/dev/null 2>&1; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium
fi
CIRULLA_CHROMIUM="$(command -v chromium)"
export CIRULLA_CHROMIUM
echo "ci: chromium for the web tests at $CIRULLA_CHROMIUM"
