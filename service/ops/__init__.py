"""What an operator sets and sees: settings, logs, metrics."""
