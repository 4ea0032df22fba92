"""The experiments of ilp_orbit, one module each: `bpp` (headline), `slab`, `prop1`."""
