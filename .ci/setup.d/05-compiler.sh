# A C compiler for the native rules core (rules/cirulla/rules/_native.c), which the install builds and
# the tests require (tests/rules/test_native.py checks that it is the core in use).
# Without one the install still succeeds, on the pure-Python core, and that test fails.
if ! command -v gcc >/dev/null 2>&1 && ! command -v cc >/dev/null 2>&1; then
  apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q gcc libc6-dev
fi
