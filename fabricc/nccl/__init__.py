"""NCCL topology files: building them from the catalog and checking them against NCCL's rules."""
