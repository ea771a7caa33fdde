"""The mid end: context building, mapping, transient hoisting and arena planning."""
