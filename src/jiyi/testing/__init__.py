"""Test doubles that ship with jiyi so that its tests, benchmarks and integrations share them."""
