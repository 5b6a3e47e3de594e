"""What was served when round 71's explorations were read: round 70's ``O`` as the second weights."""

SECOND = "training_rounds/round70/str_64ch.pth"
