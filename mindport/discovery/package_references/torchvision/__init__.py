"""A torch reference of the torchvision pieces mindport maps (see ../README.md); only ``torchvision.ops``."""
