"""A multi-worker server (``serve --workers N``): the front on the public address, the worker
processes it starts and watches, and where each match lives. Workers are single-process
servers (``medina.rpc.single``); nothing here referees."""
