"""Which feature files a run binds. The runner decides, the suite module and the recorder read it back;
it travels through environment variables because pytest-xdist workers inherit the environment but
import the suite module before any pytest option could reach it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from draconform.paths import FEATURES_DIR

FEATURES_DIR_ENV = "DRACONFORM_FEATURES_DIR"
FEATURE_PATHS_ENV = "DRACONFORM_FEATURE_PATHS"


class SelectionError(ValueError):
    """A requested path does not exist or lies outside the features directory."""


@dataclass(frozen=True)
class Selection:
    """The features directory (whose `rules.yaml` files form the catalogue) and, when the run is
    narrowed, the files and directories inside it to run; no paths means every feature file."""

    features_dir: Path
    paths: tuple[Path, ...] = ()

    @classmethod
    def create(cls, features_dir: Path = FEATURES_DIR, paths: Sequence[Path] = ()) -> Selection:
        """Resolve and check user-given paths, so that a typo fails before pytest starts. Paths outside
        `features_dir` (a checkout's `features/` after a non-editable install, a vendor's own folder) are run
        from the features folder that holds them: the nearest ancestor with `<folder>/rules.yaml` catalogues."""
        base = features_dir.resolve()
        if not base.is_dir():
            raise SelectionError(f"features directory {features_dir} does not exist")
        resolved = []
        for path in paths:
            absolute = path.resolve()
            if not absolute.exists():
                raise SelectionError(f"{path}: no such feature file or directory")
            resolved.append(absolute)
        outside = [path for path in resolved if not path.is_relative_to(base)]
        if outside:
            roots = {features_root(path) for path in resolved}
            if None in roots:
                first = next(path for path in outside if features_root(path) is None)
                raise SelectionError(f"{first}: not inside the features directory {features_dir}, nor inside a "
                                     "features folder of its own (one whose subfolders hold rules.yaml)")
            if len(roots) > 1:
                raise SelectionError("the paths lie in different features folders: "
                                     + ", ".join(sorted(str(root) for root in roots if root)))
            base = next(root for root in roots if root is not None)
        return cls(base, tuple(resolved))

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] = os.environ) -> Selection:
        features_dir = Path(environ.get(FEATURES_DIR_ENV) or FEATURES_DIR).resolve()
        paths = environ.get(FEATURE_PATHS_ENV, "")
        return cls(features_dir, tuple(Path(p).resolve() for p in paths.split(os.pathsep) if p))

    def environ(self) -> dict[str, str]:
        """The environment variables that make `from_environ` return this selection."""
        return {
            FEATURES_DIR_ENV: str(self.features_dir),
            FEATURE_PATHS_ENV: os.pathsep.join(str(p) for p in self.paths),
        }

    @property
    def narrowed(self) -> bool:
        return bool(self.paths)

    def targets(self) -> list[Path]:
        """What to bind: the chosen paths, or the whole features directory."""
        return list(self.paths) or [self.features_dir]

    def relative(self, path: Path | str) -> str:
        """A path as reports show it: relative to the features directory, with forward slashes."""
        absolute = Path(path).resolve()
        if absolute.is_relative_to(self.features_dir):
            return absolute.relative_to(self.features_dir).as_posix()
        return absolute.as_posix()


def features_root(path: Path) -> Path | None:
    """The nearest folder at or above `path` whose subfolders hold rule catalogues (`*/rules.yaml`)."""
    for folder in (path, *path.parents) if path.is_dir() else path.parents:
        if any(folder.glob("*/rules.yaml")):
            return folder
    return None
