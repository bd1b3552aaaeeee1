"""The one test module `draconform run` collects: it binds every scenario of the selected feature
files (see `selection.py`) as a pytest test. Steps and fixtures come from the plugins, never from here."""

from pytest_bdd import scenarios

from draconform.suite.selection import Selection
from draconform.suite.tracing import check_unique_names, feature_files

_selection = Selection.from_environ()
for _path in feature_files(_selection):
    check_unique_names(_path)
scenarios(*map(str, _selection.targets()), features_base_dir=str(_selection.features_dir))
