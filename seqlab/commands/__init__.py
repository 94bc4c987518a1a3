"""One module per `seqlab` command group; each exposes ``add_parser(subparsers)``."""
