"""The experiments of FlashMask, one module each (`speed`, `exactness`)."""
