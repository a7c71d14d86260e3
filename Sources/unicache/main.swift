print("unicache: not wired yet")
