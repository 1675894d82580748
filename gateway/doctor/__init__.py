"""`kioku doctor`: every check of a kioku install, offline and online, each problem with its fix.

`examine` runs them in the order a person would fix them; each check module returns
`Finding`s (finding.py, imported by all and importing none of them). `online/` asks the
real services, and its verdicts also serve `kioku setup`. Nothing here prints: the CLI
prints the findings and picks the exit code.
"""
