"""Pure projections: folds from recorded events to views. No I/O, no clock."""
