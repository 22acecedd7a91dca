"""WeaverBird HTTP gateway: JSON + Server-Sent Events over the gRPC services, and the web page."""
