"""Package layout: the repository keeps one folder per concern at the top level (reference/, steps/,
features/, schemas/) but installs all of them under the single import name `draconform`, so nothing
generic such as `reference` or `steps` lands in a user's site-packages."""

from setuptools import find_packages, setup

ROOTS = {
    "draconform": "draconform",
    "draconform.reference": "reference",
    "draconform.steps": "steps",
    "draconform.features": "features",
    "draconform.schemas": "schemas",
}

packages: list[str] = []
for name, folder in ROOTS.items():
    packages += [name] + [f"{name}.{sub}" for sub in find_packages(folder)]

setup(
    packages=packages,
    package_dir=ROOTS,
    package_data={
        # The .proto sources document the wire protocol; the .pyi stubs type the generated modules.
        "draconform": ["py.typed", "kubeletplugin/*.proto", "kubeletplugin/*.pyi", "reporting/templates/*",
                       "serve/kubeproto/*.proto", "kube/cel/*.proto", "kube/cel/*.pyi",
                       # the start-up hook of variant runs: a folder put on PYTHONPATH, not a package
                       "mutation/bootstrap/sitecustomize.py"],
        "draconform.features": ["**/*.feature", "**/*.yaml"],
        "draconform.schemas": ["**/*.json"],
    },
)
