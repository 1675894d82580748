"""Memory layer 3: the skills library, its files, format, changes and usage."""
