"""Parses racelab's JUnit XML with Python's XML parser and checks the shape CI viewers read.

Usage: python3 junit_check.py RACELAB_BIN SOURCE_DIR WORKDIR
"""
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

racelab, src, work = sys.argv[1:4]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
# One scenario that holds and one whose expectation is wrong on purpose.
# sdpa-fused: a dpor proof of a few dozen executions, a fraction of a second (also under ASan).
good = os.path.join(src, "scenarios/sdpa/sdpa-fused.toml")
bad = os.path.join(work, "wrong-expectation.toml")
text = open(os.path.join(src, "scenarios/deadlock/lazy-2-drafters.toml")).read()
text = text.replace('name = "lazy-2-drafters"', 'name = "wrong-expectation"')
text = text.replace('must_not = ["oom", "recompile_limit"]', 'must_not = ["deadlock"]')
text = text.replace('must = ["deadlock", ', 'must = [')
open(bad, "w").write(text)
junit = os.path.join(work, "junit.xml")
r = subprocess.run([racelab, "suite", good, bad, "--junit", junit], capture_output=True, text=True)
assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
assert "PASS sdpa-fused" in r.stdout and "proven (dpor, exhaustive, " in r.stdout, r.stdout
root = ET.parse(junit).getroot()
assert root.tag == "testsuites", root.tag
suites = root.findall("testsuite")
assert len(suites) == 1, suites
suite = suites[0]
cases = suite.findall("testcase")
assert [c.get("name") for c in cases] == ["sdpa-fused", "wrong-expectation"], [c.get("name") for c in cases]
assert suite.get("tests") == "2" and suite.get("failures") == "1", suite.attrib
assert cases[0].find("failure") is None
failure = cases[1].find("failure")
assert failure is not None and "deadlock" in failure.get("message"), failure
for c in cases:
    assert c.get("classname") and float(c.get("time")) >= 0, c.attrib
print("junit.xml parses: testsuites/testsuite/testcase, one failure with its message")
