"""Imports of the external solvers the core uses (CP-SAT), arranged so they cost only what is used."""
