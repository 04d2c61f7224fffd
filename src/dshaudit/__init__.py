"""dshaudit: keep an audit of DeepSeek Harness honest by checking its citations and claims."""

__version__ = "0.1.0"
