"""What each person may spend on the model: their own amounts, the periods they count
in (a day, a month, in the person's zone), and whom the owner was told about."""
