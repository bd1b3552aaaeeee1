"""Imported by Python at start-up when this folder is on PYTHONPATH, which only the mutation runner and the
plugin-check defect tests arrange: installs the overrides of the variant DRACONFORM_VARIANT names (see
draconform.mutation.overrides). A normal run never has this folder on its path."""

from draconform.mutation.overrides import install_from_environment

install_from_environment()
