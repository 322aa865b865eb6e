"""``python -m foxhunt`` (also what ``torchrun -m foxhunt`` runs)."""

from foxhunt.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
