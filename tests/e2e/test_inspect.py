"""labelprof inspect FILE --json says what the text says: of a file that
publishes no labels itself, the label library it links (DT_NEEDED, found as the
loader would), or null."""

import json
import subprocess

from conftest import LABELPROF, OUTPUT


def inspect_json(path):
    proc = subprocess.run([str(LABELPROF), "inspect", "--json", str(path)],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_inspect_json_names_the_linked_label_library():
    doc = inspect_json(OUTPUT / "workloads" / "demo")
    assert doc["form"] is None and doc["reason"], doc
    assert doc["linked_label_library"] == {
        "needed": "libcustomlabels.so",
        "path": str((OUTPUT / "lib" / "libcustomlabels.so").resolve()),
        "form": "custom_labels_v1",
    }, doc
    # no label library linked, and labels of the file's own: null
    for path in ("/bin/true", OUTPUT / "workloads" / "groundtruth-v1-exe"):
        doc = inspect_json(path)
        assert "linked_label_library" in doc and doc["linked_label_library"] is None, doc
