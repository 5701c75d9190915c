"""One module per verb: typed arguments in, a result out. The CLI only parses and prints."""
