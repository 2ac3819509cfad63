"""depthwidth: the science of the depth-width replication, importable without Snakemake."""

__version__ = "0.1.0"
