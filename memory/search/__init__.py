"""Session search: segmentation, query words and ranking over the history store."""
