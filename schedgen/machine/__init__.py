"""The only code that reads and changes the machine: commands, atomic writes, the ownership record."""
