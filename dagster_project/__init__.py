"""Servicing warehouse for auto-loan ABS (CarMax Auto Owner Trust shelf)."""
