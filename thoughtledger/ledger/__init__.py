"""The event log: events, envelopes, the hash chain and the stores."""
