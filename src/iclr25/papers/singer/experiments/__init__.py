"""The experiments of the SINGER paper, one module each (`heat`, `hjb`)."""
