# A JVM for the Java example engine (examples/TextEngine.java, tests/confinement/test_engines.py):
# Debian's default JDK, headless (its JRE, default-jre-headless, with the compiler that
# java's single-file source launcher needs). Idempotent: installs only what is missing.
if ! command -v java >/dev/null 2>&1 || ! command -v javac >/dev/null 2>&1; then
  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq default-jdk-headless
fi
