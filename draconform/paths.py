"""Where the packaged data lives: feature files, rule catalogues and JSON Schemas are installed inside
the `draconform` package (see setup.py), so they are found the same way from a checkout or a wheel."""

from pathlib import Path

import draconform.features
import draconform.schemas

FEATURES_DIR = Path(draconform.features.__file__).parent
SCHEMAS_DIR = Path(draconform.schemas.__file__).parent
