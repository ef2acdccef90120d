"""One module per piece kind: where it may go, why it may not, and what placing it does."""
