"""The project's own plumbing: the module layout and its line limit, declared packages, one version, the policies that live in one place."""
