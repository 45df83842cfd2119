"""Running experiments: plan (config -> run specs), runner (joblib), isolation, store, provenance."""
