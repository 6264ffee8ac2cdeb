// Placeholder: filled in by the checkpoint work.
