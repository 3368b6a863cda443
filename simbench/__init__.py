from .model import RobotModel
