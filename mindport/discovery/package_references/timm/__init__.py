"""A torch reference of the timm pieces mindport maps (see ../README.md); only ``timm.layers`` is provided."""
