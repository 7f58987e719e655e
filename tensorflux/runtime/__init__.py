"""Sessions and the step pipeline: prune, rewrite, place, partition, executors, rendezvous."""
