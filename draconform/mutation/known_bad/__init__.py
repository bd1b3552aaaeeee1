"""Known-bad variants per KEP; `draconform.mutation.catalogue.VARIANTS` lists them all."""
