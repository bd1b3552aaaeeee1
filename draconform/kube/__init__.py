"""What Kubernetes itself defines and every layer above reads the same way: feature gates and the
release that introduced each, the API kinds the harness serves, attribute values and quantities, and the
DRA CEL environment. It imports nothing else of draconform, so validation and the reference
implementation can both build on it without importing each other."""
