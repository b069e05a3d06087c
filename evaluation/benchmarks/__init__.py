"""One module per benchmark: its variants and the requests it makes of a model (see `base`)."""
