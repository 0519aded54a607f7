"""What the whole-tree source checks share (config_sources_test.py,
library_output_test.py): where the sources are, which files are tests, and
C/C++ text without its comments."""
import os
import re


def source_root(argv_root=None):
    """The workspace root: given, else the test's runfiles."""
    if argv_root:
        return argv_root
    return os.path.join(os.environ.get("TEST_SRCDIR", "."),
                        os.environ.get("TEST_WORKSPACE", "rondo"))


def files_under(base, roots):
    """Paths relative to `base` of the files under `roots`, without tests,
    test data and test helpers (*_test.*, testdata/, testing/)."""
    for root in roots:
        for folder, _, files in os.walk(os.path.join(base, root)):
            for name in sorted(files):
                rel = os.path.relpath(os.path.join(folder, name), base)
                parts = rel.split(os.sep)
                if "_test." in name or "testdata" in parts or "testing" in parts:
                    continue
                yield rel


def strip_comments(text):
    """C/C++ text with its comments blanked (line numbers kept)."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)
