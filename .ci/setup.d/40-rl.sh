# The learning examples' frameworks (examples/rl/*.py; tests/env/test_rl_frameworks.py): a side
# virtual environment, .cache/rl-venv, with a CPU build of PyTorch, Stable-Baselines3,
# sb3-contrib and the ONNX exporter, each pinned exactly (the versions docs/env.md reports,
# so an upstream release cannot change what CI tests). It stays out of the project's extras
# and lock: a plain `torch` requirement pulls a CUDA build of several GB, `torch==2.13.0`
# takes a CPU build.
# The project itself is not installed twice: a .pth file in the side environment adds the
# checkout's own .venv (made by .ci/run after these steps) behind the side environment's
# packages. Exports CIRULLA_RL_PYTHON, which the tests read (they fail, not skip, when it is
# set and broken). Idempotent: a working side environment is kept as it is. A first install
# runs in the background, beside the project's own install and the first tests
# (CIRULLA_RL_STATUS names the file it writes when done: tests/rl_python.py waits for it);
# it downloads about 1 GB (measured: 8 min wall, 70 s CPU, on a loaded 2-core machine); set
# CIRULLA_RL_SETUP=0 to skip it (the tests then say how to get it instead of running).
if [ "${CIRULLA_RL_SETUP:-1}" = 0 ]; then
  return 0
fi
rl_venv="$PWD/.cache/rl-venv"
rl_ok() {
  "$rl_venv/bin/python" -c "import torch, stable_baselines3, sb3_contrib, onnx, onnxscript" \
    >/dev/null 2>&1
}
rl_link_checkout() {
  "$rl_venv/bin/python" - "$PWD/.venv" <<'PY'
import pathlib, sys, sysconfig
main = pathlib.Path(sys.argv[1])
line = (
    "import glob, site; list(map(site.addsitedir, "
    f"glob.glob({str(main)!r} + '/lib/python*/site-packages')))\n"
)
pathlib.Path(sysconfig.get_paths()["purelib"], "cirulla-checkout.pth").write_text(line)
PY
}
export CIRULLA_RL_PYTHON="$rl_venv/bin/python"
if rl_ok; then
  rl_link_checkout
else
  # Installed in the background, beside the project's own install and the first tests
  # (tests/rl_python.py waits for the status file, and fails with this log if it failed).
  mkdir -p .cache
  export CIRULLA_RL_STATUS="$PWD/.cache/rl-venv.status"
  rm -f "$CIRULLA_RL_STATUS"
  (
    {
      rm -rf "$rl_venv" &&
        python3 -m venv "$rl_venv" &&
        "$rl_venv/bin/pip" install -q --disable-pip-version-check \
          'torch==2.13.0' 'stable-baselines3==2.9.2' 'sb3-contrib==2.9.2' \
          'onnx==1.23.2' 'onnxscript==0.7.2' &&
        rl_link_checkout &&
        rl_ok
    } >"$PWD/.cache/rl-venv.log" 2>&1 && echo ok >"$CIRULLA_RL_STATUS.part" ||
      { echo "failed"; tail -c 4000 "$PWD/.cache/rl-venv.log"; } >"$CIRULLA_RL_STATUS.part"
    mv "$CIRULLA_RL_STATUS.part" "$CIRULLA_RL_STATUS"
  ) &
  echo "ci: the side venv with PyTorch installs in the background (.cache/rl-venv.log)"
fi
