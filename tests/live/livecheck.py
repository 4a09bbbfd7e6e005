"""What the live checks share: where the torch environment is and whether the racelab under
test can run Python at all (each skips, 77, saying why)."""
import os
import subprocess
import sys
import tempfile

TORCH_VENV = os.environ.get("RACELAB_TORCH_VENV", "/opt/racelab/torch-2.11.0")


def need_torch_env(what="torch"):
    """Exits 77 where tools/install-torch.sh has not made the torch environment."""
    if not os.path.exists(os.path.join(TORCH_VENV, ".racelab-torch")):
        print(f"SKIPPED: no {what} environment at {TORCH_VENV} (tools/install-torch.sh makes "
              f"it; tools/test.sh runs it)")
        sys.exit(77)


def need_python_bridge(racelab, src):
    """Exits 77 where racelab was built without the Python bridge (the sanitizer builds)."""
    with tempfile.TemporaryDirectory() as probe_dir:
        probe = subprocess.run([racelab, "live", "python", "--interpose", "none", "--executions",
                                "1", "--out", probe_dir,
                                os.path.join(src, "tests", "live", "pipelines", "primitives.py"),
                                "--", "rlock"], capture_output=True, text=True)
    if probe.returncode == 2 and "without the Python bridge" in probe.stderr:
        print("SKIPPED: racelab was built without the Python bridge")
        sys.exit(77)
