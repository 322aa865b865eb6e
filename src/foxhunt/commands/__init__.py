"""One module per command: arguments in, printing and exit codes out (the CLI map is cli.py)."""
