"""Transports for the master and worker services: gRPC and in-process."""
