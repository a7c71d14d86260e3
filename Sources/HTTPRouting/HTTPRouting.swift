enum HTTPRoutingPlaceholder {}
