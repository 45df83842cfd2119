"""Reports: tables beside the papers, plots, and the CI regression check."""
